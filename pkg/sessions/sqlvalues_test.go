package sessions

import (
	"bytes"
	"strings"
	"testing"
)

// TestValueArena: copies are equal to their source and independent of it and
// of each other, even when a consumer appends to one.
func TestValueArena(t *testing.T) {
	var a valueArena
	src := []byte("1234567890")
	one := a.copy(src)
	two := a.copyString("role")
	long := a.copy(bytes.Repeat([]byte("x"), arenaMaxValue+1))
	src[0] = '9'
	if string(one) != "1234567890" || string(two) != "role" || len(long) != arenaMaxValue+1 {
		t.Fatalf("copies %q %q %d bytes", one, two, len(long))
	}
	_ = append(one, "-appended"...)
	if string(two) != "role" {
		t.Errorf("appending to one copy changed the next: %q", two)
	}
	var many [][]byte
	for i := range 1000 {
		many = append(many, a.copyString(strings.Repeat(string(rune('a'+i%26)), 1+i%arenaMaxValue)))
	}
	for i, b := range many {
		if want := strings.Repeat(string(rune('a'+i%26)), 1+i%arenaMaxValue); string(b) != want {
			t.Fatalf("copy %d = %q, want %q", i, b, want)
		}
	}
}
