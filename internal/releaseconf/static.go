package releaseconf

import (
	"debug/elf"
	"fmt"
)

// CheckStatic reports why the ELF file at path is not a static executable:
// it asks for a program interpreter (the dynamic loader) or names shared
// libraries it needs. nil means it runs on any Linux of its architecture.
func CheckStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("static check: %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("static check: %s is dynamically linked (it has a program interpreter)", path)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("static check: %s: %w", path, err)
	}
	if len(libs) > 0 {
		return fmt.Errorf("static check: %s needs shared libraries %v", path, libs)
	}
	return nil
}
