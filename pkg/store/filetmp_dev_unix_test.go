//go:build unix

package store_test

import (
	"os"
	"syscall"
)

func devOf(fi os.FileInfo) uint64 { return uint64(fi.Sys().(*syscall.Stat_t).Dev) }
