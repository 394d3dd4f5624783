package runtime

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Where tenants' learnt length state lives under a state directory: one
// directory per tenant in TenantStatesDir, named by a keyed hash of the
// tenant's name (HMAC-SHA256 under the key in TenantStateKeyFile, made at
// the first start). The name is never written: tenants named after a key
// ("key-" and a digest) would otherwise put a digest of the key on disk,
// and without the key no one who lists the directory can confirm a guessed
// tenant name.
const (
	TenantStatesDir     = "tenants"
	TenantStateKeyFile  = "name-key"
	tenantStateKeyBytes = 32
)

// tenantStore finds each tenant's state directory.
type tenantStore struct {
	dir string // stateDir/TenantStatesDir
	key []byte
}

// openTenantStore opens (or makes) the tenants' directory under stateDir
// and its naming key. A key file of the wrong size is an error, never
// replaced: a new key would orphan every tenant's saved state.
func openTenantStore(stateDir string) (*tenantStore, error) {
	dir := filepath.Join(stateDir, TenantStatesDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("tenants' length state: %w", err)
	}
	path := filepath.Join(dir, TenantStateKeyFile)
	key, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		fresh := make([]byte, tenantStateKeyBytes)
		rand.Read(fresh) // never fails (crypto/rand)
		if err = writeSecretAtomic(path, fresh); err == nil {
			key, err = os.ReadFile(path) // ours, or another process's made first
		}
	}
	if err != nil {
		return nil, fmt.Errorf("tenants' length state: naming key: %w", err)
	}
	if len(key) != tenantStateKeyBytes {
		return nil, fmt.Errorf("tenants' length state: naming key %s holds %d bytes, want %d (remove the %s directory to start every tenant afresh)",
			path, len(key), tenantStateKeyBytes, TenantStatesDir)
	}
	return &tenantStore{dir: dir, key: key}, nil
}

// dirOf is the directory of tenant's state: 128 bits of the keyed hash.
func (s *tenantStore) dirOf(tenant string) string {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte(tenant))
	return filepath.Join(s.dir, hex.EncodeToString(h.Sum(nil)[:16]))
}

// writeSecretAtomic writes data to a new file at path, readable by its
// owner only (os.CreateTemp's mode), whole or not at all: a temporary file
// linked into place. An existing path is kept (another process made it
// first).
func writeSecretAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Link(f.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}
