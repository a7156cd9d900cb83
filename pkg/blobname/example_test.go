package blobname_test

import (
	"fmt"

	"github.com/mediactl/mediactl/pkg/blobname"
)

func ExampleParse() {
	for _, key := range []string{
		"inbound/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png",
		"4f1c2a7e9b0d4a55a1c2d3e4f5a6b7c8.jpg", // coffer's uuid names are opaque
	} {
		n, ok := blobname.Parse(key)
		fmt.Println(ok, n.Ext)
	}
	// Output:
	// true .png
	// false
}
