package trash_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// name is a content-addressed blob name, as forge writes it.
func name(content string) string {
	d := sha256.Sum256([]byte(content))
	return hex.EncodeToString(d[:]) + ".png"
}
