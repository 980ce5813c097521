package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/apiary-net/apiary/bpf/internal/srchash"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "srchash:", err)
		os.Exit(1)
	}
}

func run() error {
	cc := os.Getenv("BPF_CLANG")
	if cc == "" {
		cc = "clang-19"
	}
	out, err := exec.Command(cc, "--version").Output()
	if err != nil {
		return fmt.Errorf("run %s --version: %w", cc, err)
	}
	sum, err := srchash.Sum(os.DirFS("."))
	if err != nil {
		return err
	}
	objects, err := srchash.ObjectSums(os.DirFS("."))
	if err != nil {
		return err
	}
	version, _, _ := strings.Cut(string(out), "\n")
	lock := srchash.Lock{SHA256: sum, Clang: strings.TrimSpace(version), Objects: objects}
	if err := os.WriteFile(srchash.LockFile, []byte(lock.Format()), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", srchash.LockFile, err)
	}
	return nil
}
