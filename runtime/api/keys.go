package api

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// EnvAPIKeys is the environment variable with comma-separated API keys.
const EnvAPIKeys = "PITSTOP_API_KEYS"

// LoadAPIKeys gathers the accepted API keys from flags, the PITSTOP_API_KEYS
// environment variable (comma-separated) and a file (one key a line; blank
// lines and lines starting with # are skipped). No keys means no
// authentication.
func LoadAPIKeys(flagKeys []string, file string) ([]string, error) {
	var keys []string
	add := func(k string) {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	for _, k := range flagKeys {
		add(k)
	}
	for _, k := range strings.Split(os.Getenv(EnvAPIKeys), ",") {
		add(k)
	}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("api keys file: %w", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			add(line)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("api keys file %s: %w", file, err)
		}
	}
	return keys, nil
}
