package storekey_test

import (
	"errors"
	"fmt"

	"github.com/mediactl/mediactl/pkg/storekey"
)

func ExampleValid() {
	for _, key := range []string{
		"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png",
		"u/t/uploads/f.png",
		"../etc/passwd",
		".mediactl/lock",
	} {
		err := storekey.Valid(key)
		fmt.Println(err == nil, errors.Is(err, storekey.ErrInvalidKey))
	}
	// Output:
	// true false
	// true false
	// false true
	// false true
}
