package storetest

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
)

// serviceEnv returns env, which scripts/services/SERVICE.sh start sets for a
// running server. When it is empty the test is skipped, except on CI
// (CI=true), where a missing server must not pass as a skip.
func serviceEnv(t testing.TB, env, service string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		script := "scripts/services/" + service + ".sh"
		msg := service + " not running: start it with " + script + " (eval \"$(" + script + " start)\" sets " + env + ")"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return v
}

// randomName returns prefix-<random hex>: new even across runs against a
// long-lived server, whose buckets outlive a test that fails to clean up.
func randomName(prefix string) string {
	var r [4]byte
	rand.Read(r[:])
	return prefix + "-" + hex.EncodeToString(r[:])
}

// s3Query is the URL query that reaches the S3 server at endpoint:
// endpoint, path-style addressing, region.
func s3Query(endpoint string) string {
	return "endpoint=" + url.QueryEscape(endpoint) + "&use_path_style=true&region=us-east-1"
}
