package usage_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/mediactl/mediactl/pkg/usage"
)

func TestErrorf(t *testing.T) {
	err := fmt.Errorf("--store x: %w", usage.Errorf("store directory x does not exist: %w", fs.ErrNotExist))
	if !errors.Is(err, usage.Err) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("errors.Is lost the usage mark or the cause: %v", err)
	}
	if got := err.Error(); got != "--store x: store directory x does not exist: file does not exist" {
		t.Fatalf("text %q", got)
	}
	if errors.Is(errors.New("disk on fire"), usage.Err) {
		t.Fatal("a plain error matched")
	}
}

func ExampleErrorf() {
	err := usage.Errorf("unknown layout %q: use forge or coffer", "forj")
	fmt.Println(err, errors.Is(err, usage.Err))
	// Output: unknown layout "forj": use forge or coffer true
}
