package migrate

import (
	"iter"
	"maps"
	"math"
	"path"

	"github.com/mediactl/mediactl/pkg/blobname"
)

// Proofs are a journal's proven copies by source key. A migration of millions
// of blobs keeps one per blob for the whole run (a rerun skips what is proven,
// the rewrite finds each copy), so they are held compactly: a key that is a
// content-addressed name whose copy has the digest the name carries — every
// blob forge and coffer write — as that digest and the index of its folder
// and extension, with no string of its own (about half the memory of a map
// from key strings); any other key as its string.
//
// Each proof also carries whether this run confirmed it (see Journal's
// keepConfirmed): a proof read from the journal is evidence that the copy
// step checks, not yet a copy the rewrite may point at.
type Proofs struct {
	named map[namedKey]namedProof
	other map[string]otherProof
	// forms are the folder and extension pairs of the named keys, each kept
	// once ("" and ".png" for a forge store), and index them.
	forms   []form
	formIDs map[form]uint32
	// leftAlone are the proofs keepConfirmed set aside for blobs this run
	// listed and left alone (see markLeftAlone): not acted on, but known to
	// be this migration's copies.
	leftAlone *Proofs
}

type form struct{ dir, ext string }

type namedKey struct {
	digest blobname.Digest
	form   uint32
}

// namedProof keeps the time of the proof in 32 bits (Unix seconds until 2106;
// a journal's time outside that is clamped), so that the flag costs nothing.
type namedProof struct {
	size, modTime int64
	at            uint32
	confirmed     bool
	found         bool
	leftAlone     bool
}

func (p namedProof) proof(d blobname.Digest) Proof {
	return Proof{Size: p.size, ModTime: p.modTime, At: int64(p.at), SHA256: d, Found: p.found}
}

type otherProof struct {
	Proof
	confirmed bool
	leftAlone bool
}

func newProofs() *Proofs {
	return &Proofs{named: map[namedKey]namedProof{}, other: map[string]otherProof{}, formIDs: map[form]uint32{}}
}

// Len is the number of proven copies. A nil *Proofs holds none; so do Get
// and All.
func (ps *Proofs) Len() int {
	if ps == nil {
		return 0
	}
	return len(ps.named) + len(ps.other)
}

// Get returns the proof of key's copy.
func (ps *Proofs) Get(key string) (Proof, bool) {
	if ps == nil {
		return Proof{}, false
	}
	if p, ok := ps.other[key]; ok {
		return p.Proof, true
	}
	d, f, ok := splitNamed(key)
	if !ok {
		return Proof{}, false
	}
	id, ok := ps.formIDs[f]
	if !ok {
		return Proof{}, false
	}
	p, ok := ps.named[namedKey{d, id}]
	if !ok {
		return Proof{}, false
	}
	return p.proof(d), true
}

// set records p as the proof of key's copy, replacing an earlier one.
func (ps *Proofs) set(key string, p Proof) {
	d, f, named := splitNamed(key)
	if named && p.SHA256 == d {
		id, known := ps.formIDs[f]
		if !known {
			id = uint32(len(ps.forms))
			ps.forms = append(ps.forms, f)
			ps.formIDs[f] = id
		}
		if len(ps.other) > 0 {
			delete(ps.other, key) // an earlier copy whose bytes were not what the name says
		}
		ps.named[namedKey{d, id}] = namedProof{size: p.Size, modTime: p.ModTime, at: uint32(min(max(p.At, 0), math.MaxUint32)), found: p.Found}
		return
	}
	// An opaque name, or a copy whose bytes are not what the name says.
	if named {
		if id, known := ps.formIDs[f]; known {
			delete(ps.named, namedKey{d, id})
		}
	}
	ps.other[key] = otherProof{Proof: p}
}

// confirmIf marks key's proof as confirmed by this run when holds (nil for
// always) says it still holds, and reports whether it did: one lookup for
// the copy step's check of a proof and its confirmation.
func (ps *Proofs) confirmIf(key string, holds func(Proof) bool) bool {
	if p, ok := ps.other[key]; ok {
		if holds != nil && !holds(p.Proof) {
			return false
		}
		p.confirmed = true
		ps.other[key] = p
		return true
	}
	d, f, named := splitNamed(key)
	if !named {
		return false
	}
	id, known := ps.formIDs[f]
	if !known {
		return false
	}
	k := namedKey{d, id}
	p, ok := ps.named[k]
	if !ok || holds != nil && !holds(p.proof(d)) {
		return false
	}
	p.confirmed = true
	ps.named[k] = p
	return true
}

// markLeftAlone notes that this run listed key and left it for a later
// run (within --min-age, a temporary-looking name modified lately), when
// key has a proof.
func (ps *Proofs) markLeftAlone(key string) {
	if p, ok := ps.other[key]; ok {
		p.leftAlone = true
		ps.other[key] = p
		return
	}
	d, f, named := splitNamed(key)
	if !named {
		return
	}
	id, known := ps.formIDs[f]
	if !known {
		return
	}
	k := namedKey{d, id}
	if p, ok := ps.named[k]; ok {
		p.leftAlone = true
		ps.named[k] = p
	}
}

// LeftAlone reports whether an earlier run proved key's copy and this run
// listed key but left it alone (see markLeftAlone): the proof is not one
// this run acts on.
func (ps *Proofs) LeftAlone(key string) bool {
	if ps == nil || ps.leftAlone == nil {
		return false
	}
	_, ok := ps.leftAlone.Get(key)
	return ok
}

// keepConfirmed forgets every proof this run did not confirm, setting aside
// those of blobs it left alone (LeftAlone).
func (ps *Proofs) keepConfirmed() {
	ps.leftAlone = nil
	for k, p := range ps.other {
		if !p.confirmed && p.leftAlone {
			ps.aside(k, p.Proof)
		}
	}
	for k, p := range ps.named {
		if !p.confirmed && p.leftAlone {
			f := ps.forms[k.form]
			ps.aside(f.dir+k.digest.String()+f.ext, p.proof(k.digest))
		}
	}
	maps.DeleteFunc(ps.other, func(_ string, p otherProof) bool { return !p.confirmed })
	maps.DeleteFunc(ps.named, func(_ namedKey, p namedProof) bool { return !p.confirmed })
}

func (ps *Proofs) aside(key string, p Proof) {
	if ps.leftAlone == nil {
		ps.leftAlone = newProofs()
	}
	ps.leftAlone.set(key, p)
}

// drop forgets key's proof, if it has one.
func (ps *Proofs) drop(key string) {
	delete(ps.other, key)
	if d, f, named := splitNamed(key); named {
		if id, known := ps.formIDs[f]; known {
			delete(ps.named, namedKey{d, id})
		}
	}
}

// All yields every key and its proof, in no particular order. Named keys are
// spelled again from their parts, a string each.
func (ps *Proofs) All() iter.Seq2[string, Proof] {
	return func(yield func(string, Proof) bool) {
		if ps == nil {
			return
		}
		for k, p := range ps.other {
			if !yield(k, p.Proof) {
				return
			}
		}
		for k, p := range ps.named {
			f := ps.forms[k.form]
			if !yield(f.dir+k.digest.String()+f.ext, p.proof(k.digest)) {
				return
			}
		}
	}
}

// splitNamed parses key as a content-addressed name: its digest and its folder
// ("" or ending in "/") and extension. The name's hex is lower-case (see
// blobname.ParseBase), so the parts spell key again exactly.
func splitNamed(key string) (blobname.Digest, form, bool) {
	base := path.Base(key)
	d, ext, ok := blobname.ParseBase(base)
	if !ok || len(base) > len(key) || key[len(key)-len(base):] != base {
		return d, form{}, false
	}
	return d, form{dir: key[:len(key)-len(base)], ext: ext}, true
}
