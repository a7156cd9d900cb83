package mediatype_test

import (
	"fmt"
	"path"

	"github.com/mediactl/mediactl/pkg/mediatype"
)

// A blob named .png whose bytes are a JPEG: the name claims one type, the
// content shows another.
func Example() {
	key := "inbound/photo.png"
	head := []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01")
	claimed, actual := mediatype.ForExt(path.Ext(key)), mediatype.Sniff(head)
	fmt.Println(claimed, actual, mediatype.Ext(actual))
	// Output: image/png image/jpeg .jpg
}
