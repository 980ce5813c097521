package bpfapi_test

import (
	"path/filepath"
	"strconv"
)

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

func filepathGlob(pattern string) ([]string, error) { return filepath.Glob(pattern) }
