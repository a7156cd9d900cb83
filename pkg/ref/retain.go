package ref

import (
	"bytes"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mediactl/mediactl/pkg/blobname"
)

// Index holds the blobs of a store and marks those that some session string
// refers to under the retention rule:
//
// A blob is referenced when its file name (the last segment of its key), or the
// name without its extension, appears as a path segment or token in any session
// string, or — for a content-addressed blob — when its bare digest appears as a
// run of exactly 64 hex characters (either case). A token is a maximal run of
// letters, digits, '.', '_' and '-'. A name with other characters (spaces,
// non-ASCII) is searched for as a plain substring.
//
// The rule looks at every string, not only at fields that hold references: a
// digest in a tool's output, a file name in a chat message, a path inside
// embedded JSON all keep the blob. A false "referenced" only keeps a blob; a
// false "unreferenced" would lose data.
//
// Add every blob first, then call Mark from any number of goroutines.
type Index struct {
	byToken map[string][]int32
	// byDigest holds the first blob of each digest; more blobs with the same
	// digest (another folder or extension) are in moreDigest. Content-addressed
	// names need no token entries: any token holding their digest marks them.
	byDigest   map[blobname.Digest]int32
	moreDigest map[blobname.Digest][]int32
	odd        []oddName // names that are not a single token
	marks      []atomic.Bool
	keys       []string
	idsOnce    sync.Once
	ids        map[string]int32 // built on the first Lookup
}

type oddName struct {
	name []byte
	id   int32
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{byToken: map[string][]int32{}, byDigest: map[blobname.Digest]int32{}, moreDigest: map[blobname.Digest][]int32{}}
}

// Add registers a blob by its store key and returns its id (0, 1, 2, …).
func (x *Index) Add(key string) int {
	id := int32(len(x.keys))
	x.keys = append(x.keys, key)
	x.marks = append(x.marks, atomic.Bool{})
	name := path.Base(key)
	if n, ok := blobname.Parse(name); ok {
		if _, dup := x.byDigest[n.Digest]; dup {
			x.moreDigest[n.Digest] = append(x.moreDigest[n.Digest], id)
		} else {
			x.byDigest[n.Digest] = id
		}
		return int(id)
	}
	if !isToken(name) {
		x.odd = append(x.odd, oddName{[]byte(name), id})
		return int(id)
	}
	x.byToken[name] = append(x.byToken[name], id)
	if stem := strings.TrimSuffix(name, path.Ext(name)); stem != name && stem != "" {
		x.byToken[stem] = append(x.byToken[stem], id)
	}
	return int(id)
}

// Len is the number of blobs added.
func (x *Index) Len() int { return len(x.keys) }

// Key returns the key of blob id.
func (x *Index) Key(id int) string { return x.keys[id] }

// Lookup returns the id of the blob added with key. Call it only once every
// blob is added.
func (x *Index) Lookup(key string) (int, bool) {
	x.idsOnce.Do(func() {
		x.ids = make(map[string]int32, len(x.keys))
		for i, k := range x.keys {
			x.ids[k] = int32(i)
		}
	})
	id, ok := x.ids[key]
	return int(id), ok
}

// Referenced reports whether blob id was marked.
func (x *Index) Referenced(id int) bool { return x.marks[id].Load() }

// Mark marks every blob that s refers to under the retention rule.
func (x *Index) Mark(s []byte) {
	for _, o := range x.odd {
		if bytes.Contains(s, o.name) {
			x.marks[o.id].Store(true)
		}
	}
	for i := 0; i < len(s); {
		if !isTokenByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isTokenByte(s[j]) {
			j++
		}
		x.markToken(s[i:j])
		i = j
	}
}

func (x *Index) markToken(tok []byte) {
	for {
		for _, id := range x.byToken[string(tok)] { // no allocation: map lookup by string(bytes)
			x.marks[id].Store(true)
		}
		// "ab….png." at the end of a sentence names "ab….png".
		if len(tok) == 0 || tok[len(tok)-1] != '.' {
			break
		}
		tok = tok[:len(tok)-1]
	}
	if len(tok) < blobname.DigestLen {
		return
	}
	for i := 0; i < len(tok); {
		if !isHex(tok[i]) {
			i++
			continue
		}
		j := i
		for j < len(tok) && isHex(tok[j]) {
			j++
		}
		if j-i == blobname.DigestLen {
			if d, ok := blobname.ParseDigest(string(tok[i:j])); ok {
				if id, ok := x.byDigest[d]; ok {
					x.marks[id].Store(true)
					for _, id := range x.moreDigest[d] {
						x.marks[id].Store(true)
					}
				}
			}
		}
		i = j
	}
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenByte(s[i]) {
			return false
		}
	}
	return true
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
