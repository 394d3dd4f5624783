//go:build !unix

package safetensors

func mapFile(path string) ([]byte, func() error, error) { return readFile(path) }
