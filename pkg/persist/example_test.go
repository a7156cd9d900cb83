package persist_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/mediactl/mediactl/pkg/persist"
)

// A runtime saves a user's upload into forge's inbound folder. The second
// upload of the same bytes writes nothing: it freshens the blob that is
// there, so that gc keeps it for the session that is about to name it.
func Example() {
	workdir, err := os.MkdirTemp("", "forge-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(workdir)
	inbound := filepath.Join(workdir, ".forge", "files", "inbound")

	for range 2 {
		upload := strings.NewReader("hello")
		b, err := persist.Put(inbound, upload, ".txt", persist.Options{})
		if err != nil {
			log.Fatal(err)
		}
		// The session that is saved next names b.Path.
		fmt.Println(b.Name, b.Written)
	}
	// Output:
	// 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824.txt true
	// 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824.txt false
}
