// Package gomodtest builds Go programs the way a user of this module would: in a throwaway module
// that requires github.com/brine-kv/brine, replaced by a working tree, with every other version as
// brine pins it, offline. The README's programs (docs) and the one-line drop-in test (integration)
// are built so.
package gomodtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
)

// ModuleFlags is the GOFLAGS a module written by Write needs: its go.mod names brine alone, so the
// go command completes the module graph from brine's (-mod=mod), out of the module cache.
const ModuleFlags = "GOFLAGS=-mod=mod -buildvcs=false"

// Write makes dir a module named name that requires brine, replaced by the repository at root,
// with root's go line and go.sum, and writes files (paths relative to dir) into it.
func Write(root, dir, name string, files map[string]string) error {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return err
	}
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(mod)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return err
	}
	all := map[string]string{
		"go.mod": fmt.Sprintf("module %s\n\n%s\n\nrequire github.com/brine-kv/brine v0.0.0-00010101000000-000000000000\n\nreplace github.com/brine-kv/brine => %s\n",
			name, goLine, root),
		"go.sum": string(sum),
	}
	for path, text := range files {
		all[path] = text
	}
	for path, text := range all {
		path = filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Download fetches through the configured module proxy what the offline go commands of Go need from
// root's module: every module that builds and tests its packages, and the go.mod file of every module
// in its graph (a module of Write completes its graph from brine's). A fresh module cache holds
// neither until something asks for them, and offline nothing can, so call it before Go.
func Download(ctx context.Context, root string) error {
	for _, args := range [][]string{{"mod", "download"}, {"list", "-m", "all"}} {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %v in %s: %w\n%s", args, root, err, out)
		}
	}
	return nil
}

// Go runs the go command in dir offline (no proxy, no workspace, the local
// toolchain; after Download) with extraEnv added (ModuleFlags in a module of Write), and returns its combined output.
func Go(ctx context.Context, dir string, extraEnv []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	cmd.Env = append(cmd.Env, extraEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("go %v in %s: %w", args, dir, err)
	}
	return out, nil
}
