package report

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// WriteJSON writes r to path as indented JSON (DESIGN.md §8). The write is
// atomic: the file appears complete or not at all. Non-finite numbers are
// written as 0.
func WriteJSON(path string, r *Report) error {
	if r == nil {
		return errors.New("report: WriteJSON: nil report")
	}
	data, err := json.MarshalIndent(r.sanitized(), "", "  ")
	if err != nil {
		return fmt.Errorf("report: encode %s: %w", path, err)
	}
	data = append(data, '\n')
	return writeAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// CSVHeader is the header row WriteCSV writes: workload, executor, profile,
// then the JSON names of Run in declaration order.
func CSVHeader() []string {
	names, _ := runFields()
	return append([]string{"workload", "executor", "profile"}, names...)
}

// WriteCSV writes r to path as CSV, one row per run, with CSVHeader as the
// header. The write is atomic. The handling map is written as
// "kind=count;kind=count" sorted by kind.
func WriteCSV(path string, r *Report) error {
	if r == nil {
		return errors.New("report: WriteCSV: nil report")
	}
	r = r.sanitized()
	_, index := runFields()
	return writeAtomic(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(CSVHeader()); err != nil {
			return err
		}
		row := make([]string, 0, 3+len(index))
		for _, run := range r.Runs {
			row = append(row[:0], r.Workload, r.Executor, r.Profile)
			v := reflect.ValueOf(run)
			for _, i := range index {
				row = append(row, csvValue(v.Field(i)))
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

func csvValue(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Map:
		m, _ := v.Interface().(map[string]int)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + strconv.Itoa(m[k])
		}
		return strings.Join(parts, ";")
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = csvValue(v.Index(i))
		}
		return strings.Join(parts, ";")
	default:
		return fmt.Sprint(v.Interface())
	}
}

// writeAtomic writes a temporary file in path's directory with write, syncs
// it and renames it onto path. On any error the temporary file is removed
// and path is left as it was.
func writeAtomic(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriter(f)
	if err = write(bw); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	return nil
}
