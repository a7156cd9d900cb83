package scan

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/blobname"
)

// parseFlat agrees with blobname.Parse on names without a folder.
func TestParseFlatAgreesWithParse(t *testing.T) {
	d := sha256.Sum256([]byte("cat"))
	h := hex.EncodeToString(d[:])
	for _, name := range []string{
		h, h + ".png", h + ".abcdefgh", h + ".PNG", strings.ToUpper(h), h[:63] + ".png", h + "0.png",
		h + ".tar.gz", h + ".", h[:10] + "g" + h[11:], h[:10] + "/" + h[11:], h[:63] + "\xff", "", "x.png",
	} {
		n, want := blobname.Parse(name)
		want = want && path.Base(name) == name
		got, ext, ok := parseFlat(name)
		if ok != want || ok && (got != n.Digest || ext != n.Ext) {
			t.Errorf("parseFlat(%q) = %x %q %v, blobname.Parse says %x %q %v", name, got, ext, ok, n.Digest, n.Ext, want)
		}
	}
}
