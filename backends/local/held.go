package local

import (
	"os"
	"slices"
	"sync"
)

// heldHere lists the store files this process has open through Open, by file identity. bbolt locks
// a file with flock, which is held per open file, not per process: a second Open of a file in the
// process that holds it waits and times out as one in another process does, and only this list
// tells the two apart for the error. It is process-wide because the lock it mirrors is.
var heldHere held

type held struct {
	mu    sync.Mutex
	files []heldFile
}

type heldFile struct {
	b  *Backend
	fi os.FileInfo
}

// add records that b holds the file at path; a file it cannot stat is not recorded (the error
// then falls back to naming another process).
func (h *held) add(b *Backend, path string) {
	fi, err := os.Stat(path)
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.files = append(h.files, heldFile{b: b, fi: fi})
}

// remove forgets b's file.
func (h *held) remove(b *Backend) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.files = slices.DeleteFunc(h.files, func(f heldFile) bool { return f.b == b })
}

// has reports whether this process holds the file at path open.
func (h *held) has(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.ContainsFunc(h.files, func(f heldFile) bool { return os.SameFile(f.fi, fi) })
}
