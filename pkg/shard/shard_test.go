package shard_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/shard"
)

func keys(n int) []string {
	out := make([]string, 0, 2*n)
	for i := range n {
		sum := sha256.Sum256([]byte(fmt.Sprint(i)))
		out = append(out, hex.EncodeToString(sum[:])+".png")      // content-addressed
		out = append(out, fmt.Sprintf("uploads/photo %d.jpg", i)) // opaque
	}
	return out
}

// Every key belongs to exactly one shard, whatever N, and shards are about
// even.
func TestShardsPartitionTheKeys(t *testing.T) {
	ks := keys(20000)
	for _, n := range []int{1, 2, 3, 7, 16} {
		counts := make([]int, n)
		for _, k := range ks {
			owners := 0
			for i := range n {
				if (shard.Spec{K: i, N: n}).Owns(k) {
					owners++
					counts[i]++
				}
			}
			if owners != 1 {
				t.Fatalf("N=%d: %s is owned by %d shards", n, k, owners)
			}
		}
		want := len(ks) / n
		for i, c := range counts {
			if c < want*8/10 || c > want*12/10 {
				t.Errorf("N=%d: shard %d has %d keys, want about %d", n, i, c, want)
			}
		}
	}
}

// A content-addressed name belongs to the shard of its digest, in any folder
// and with any extension: the same blob in two layouts is in one shard.
func TestContentAddressedNameFollowsItsDigest(t *testing.T) {
	d := strings.Repeat("ab", 32)
	for _, n := range []int{2, 7, 16} {
		s := shard.Of(d+".png", n)
		for _, k := range []string{d, d + ".jpg", "inbound/" + d + ".png", "a/b/" + d + ".pdf"} {
			if got := shard.Of(k, n); got != s {
				t.Errorf("N=%d: %s in shard %d, %s.png in %d", n, k, got, d, s)
			}
		}
	}
}

// HexRange names prefixes that hold every content-addressed name a shard
// owns.
func TestHexRangeCoversTheShard(t *testing.T) {
	ks := keys(20000)
	for _, n := range []int{2, 3, 7, 16, 17, 300} {
		ranges := make([][]string, n)
		for k := range n {
			if ranges[k] = (shard.Spec{K: k, N: n}).HexRange(); len(ranges[k]) == 0 {
				t.Fatalf("%d/%d: empty range", k, n)
			}
		}
		for _, key := range ks {
			if strings.Contains(key, "/") {
				continue
			}
			k := shard.Of(key, n)
			found := false
			for _, p := range ranges[k] {
				if strings.HasPrefix(key, p) {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("%d/%d owns %s, outside its prefixes %v", k, n, key, ranges[k])
			}
		}
	}
	if r := (shard.Spec{K: 3, N: 16}).HexRange(); len(r) != 1 || r[0] != "3" {
		t.Errorf("3/16: %v, want [3]", r)
	}
}

func TestParse(t *testing.T) {
	env := func(v string) func(string) string {
		return func(name string) string {
			if name == shard.IndexEnv {
				return v
			}
			return ""
		}
	}
	for _, c := range []struct {
		text, index string
		want        shard.Spec
		bad         bool
	}{
		{"", "", shard.All, false},
		{"3/16", "", shard.Spec{K: 3, N: 16}, false},
		{"0/1", "", shard.Spec{K: 0, N: 1}, false},
		{"auto/8", "5", shard.Spec{K: 5, N: 8}, false},
		{"auto/8", "", shard.All, true},
		{"auto/8", "8", shard.All, true},
		{"16/16", "", shard.All, true},
		{"-1/4", "", shard.All, true},
		{"1/0", "", shard.All, true},
		{"3", "", shard.All, true},
		{"a/b", "", shard.All, true},
		{"1/70000", "", shard.All, true},
	} {
		got, err := shard.Parse(c.text, env(c.index))
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("Parse(%q) with index %q = %v, %v", c.text, c.index, got, err)
		}
	}
	if _, err := shard.Parse("auto/4", env("")); !errors.Is(err, shard.ErrNoIndex) {
		t.Errorf("auto without index: %v, want ErrNoIndex", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"3/16", "auto/4", "0/1", "x", "/", "99999999999999999999/2"} {
		f.Add(s, "1")
	}
	f.Fuzz(func(t *testing.T, text, index string) {
		s, err := shard.Parse(text, func(string) string { return index })
		if err != nil {
			return
		}
		if text != "" && (s.K < 0 || s.K >= s.N || s.N > shard.MaxShards) {
			t.Fatalf("Parse(%q) = %+v", text, s)
		}
		if text != "" && !strings.HasPrefix(text, "auto/") && s.String() != text && !strings.ContainsAny(text, "+0") {
			t.Fatalf("Parse(%q).String() = %q", text, s.String())
		}
	})
}

func FuzzOwns(f *testing.F) {
	f.Add("inbound/"+strings.Repeat("0", 64)+".png", 7)
	f.Add("x", 3)
	f.Fuzz(func(t *testing.T, key string, n int) {
		if n < 1 || n > 1000 {
			return
		}
		owners := 0
		for k := range n {
			if (shard.Spec{K: k, N: n}).Owns(key) {
				owners++
			}
		}
		if owners != 1 {
			t.Fatalf("%q owned by %d of %d shards", key, owners, n)
		}
	})
}

func ExampleSpec_Owns() {
	s, _ := shard.Parse("1/4", nil)
	for _, key := range []string{
		"0a" + strings.Repeat("0", 62) + ".png",
		"5f" + strings.Repeat("0", 62) + ".png",
		"c3" + strings.Repeat("0", 62) + ".png",
	} {
		fmt.Println(key[:2], s.Owns(key))
	}
	// Output:
	// 0a false
	// 5f true
	// c3 false
}

// TestJobOf: a pod of an Indexed Job has the host name "<job>-<index>"; the
// Job's name is the split's. Anything else names none.
func TestJobOf(t *testing.T) {
	for _, c := range []struct{ host, index, want string }{
		{"mediactl-gc-29413440-3", "3", "mediactl-gc-29413440"},
		{"mediactl-gc-29413440-12", "12", "mediactl-gc-29413440"},
		{"mediactl-gc-29413440-3", "", ""},  // not in an Indexed Job
		{"mediactl-gc-29413440-3", "4", ""}, // another index: not its pod
		{"build-host", "3", ""},             // set by hand outside Kubernetes
		{"Mediactl_GC-3", "3", ""},          // not a Kubernetes name
		{"-3", "3", ""},
	} {
		if got := shard.JobOf(c.host, c.index); got != c.want {
			t.Errorf("JobOf(%q, %q) = %q, want %q", c.host, c.index, got, c.want)
		}
	}
	for s, want := range map[string]bool{"nightly-1": true, "a": true, "": false, "-a": false, "a-": false, "A": false, "a_b": false, strings.Repeat("a", 64): false, strings.Repeat("a", 63): true} {
		if got := shard.ValidSplit(s); got != want {
			t.Errorf("ValidSplit(%q) = %v", s, got)
		}
	}
}
