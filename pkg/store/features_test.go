package store_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
)

// capabilityTypes maps each capability to its interface, independently of
// FeaturesOf, so that the test below checks it against the method sets.
var capabilityTypes = map[store.Features]reflect.Type{
	store.FeatureInternal:       reflect.TypeFor[store.Internal](),
	store.FeatureListUnordered:  reflect.TypeFor[store.UnorderedLister](),
	store.FeatureListKeys:       reflect.TypeFor[store.KeyLister](),
	store.FeatureBatchMove:      reflect.TypeFor[store.BatchMover](),
	store.FeatureMoveTo:         reflect.TypeFor[store.LocalMover](),
	store.FeatureReportsMD5:     reflect.TypeFor[store.MD5Reporter](),
	store.FeatureBatchRemove:    reflect.TypeFor[store.BatchRemover](),
	store.FeatureListSelected:   reflect.TypeFor[store.SelectiveLister](),
	store.FeatureDeleteRecovery: reflect.TypeFor[store.RecoveryReporter](),
	store.FeatureRestoreVersion: reflect.TypeFor[store.VersionRestorer](),
}

// trashElsewhere embeds a local store but would route trash moves elsewhere,
// as gc's trash-directory wrapper does: it must not be taken for a store that
// batch-moves or renames into its own folder.
type trashElsewhere struct{ *store.LocalStore }

func (trashElsewhere) Drops() store.Features { return store.FeatureBatchMove | store.FeatureMoveTo }

// onlyStore hides every capability of the store it wraps.
type onlyStore struct{ store.Store }

// undeclared embeds a local store and says nothing about what it forwards.
type undeclared struct{ *store.LocalStore }

// keepsAll embeds a local store and forwards everything correctly.
type keepsAll struct{ *store.LocalStore }

func (*keepsAll) Drops() store.Features { return 0 }

// FeaturesOf reports what each store type of the package implements.
func TestFeaturesOf(t *testing.T) {
	local, err := store.OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	mem := openT(t, "mem://")
	defer mem.Close()
	file := openT(t, "file://"+filepath.ToSlash(t.TempDir()))
	defer file.Close()
	for _, c := range []struct {
		name string
		st   store.Store
		want store.Features
		str  string
	}{
		{"local", local, store.FeatureInternal | store.FeatureListUnordered | store.FeatureListKeys | store.FeatureBatchMove | store.FeatureMoveTo | store.FeatureListSelected,
			"Internal,ListUnordered,ListKeys,MoveManyToInternal,MoveTo,ListSelected"},
		{"mem", mem, store.FeatureInternal | store.FeatureReportsMD5 | store.FeatureBatchRemove | store.FeatureListSelected | store.FeatureDeleteRecovery | store.FeatureRestoreVersion, "Internal,ReportsMD5,DeleteMany,ListSelected,DeleteRecovery,RestoreVersion"},
		{"file", file, store.FeatureInternal | store.FeatureReportsMD5 | store.FeatureBatchRemove | store.FeatureListSelected | store.FeatureDeleteRecovery | store.FeatureRestoreVersion, "Internal,ReportsMD5,DeleteMany,ListSelected,DeleteRecovery,RestoreVersion"},
		{"wrapper dropping moves", trashElsewhere{local}, store.FeatureInternal | store.FeatureListUnordered | store.FeatureListKeys | store.FeatureListSelected,
			"Internal,ListUnordered,ListKeys,ListSelected"},
		{"plain wrapper", onlyStore{local}, 0, "none"},
		{"undeclared embedding", undeclared{local}, 0, "none"},
		{"undeclared embedding, pointer", &undeclared{local}, 0, "none"},
		{"embedding that drops nothing", &keepsAll{local}, store.FeatureInternal | store.FeatureListUnordered | store.FeatureListKeys | store.FeatureBatchMove | store.FeatureMoveTo | store.FeatureListSelected,
			"Internal,ListUnordered,ListKeys,MoveManyToInternal,MoveTo,ListSelected"},
	} {
		got := store.FeaturesOf(c.st)
		if got != c.want || got.String() != c.str {
			t.Errorf("%s: FeaturesOf = %s (%d), want %s", c.name, got, got, c.str)
		}
		// Against the method sets: a capability is reported exactly when the
		// type implements its interface and does not drop it.
		var drops store.Features
		if d, ok := c.st.(store.Dropper); ok {
			drops = d.Drops()
		} else if strings.HasPrefix(c.name, "undeclared") {
			drops = store.AllFeatures
		}
		for f, iface := range capabilityTypes {
			want := reflect.TypeOf(c.st).Implements(iface) && drops&f == 0
			if got.Has(f) != want {
				t.Errorf("%s: FeaturesOf has %s = %v; implements and not dropped = %v", c.name, f, got.Has(f), want)
			}
		}
		// The accessors agree with FeaturesOf, drops included.
		_, in := store.AsInternal(c.st)
		_, ul := store.AsUnorderedLister(c.st)
		_, kl := store.AsKeyLister(c.st)
		_, bm := store.AsBatchMover(c.st)
		_, lm := store.AsLocalMover(c.st)
		_, md := store.AsMD5Reporter(c.st)
		_, br := store.AsBatchRemover(c.st)
		_, ls := store.AsSelectiveLister(c.st)
		_, dr := store.AsRecoveryReporter(c.st)
		_, rv := store.AsVersionRestorer(c.st)
		offered := map[store.Features]bool{store.FeatureInternal: in, store.FeatureListUnordered: ul, store.FeatureListKeys: kl,
			store.FeatureBatchMove: bm, store.FeatureMoveTo: lm, store.FeatureReportsMD5: md, store.FeatureBatchRemove: br, store.FeatureListSelected: ls,
			store.FeatureDeleteRecovery: dr, store.FeatureRestoreVersion: rv}
		for f, ok := range offered {
			if ok != got.Has(f) {
				t.Errorf("%s: As… for %s = %v, FeaturesOf has it = %v", c.name, f, ok, got.Has(f))
			}
		}
	}
	// The wrapper still has the method through embedding: only the accessor
	// keeps it from being used.
	if _, ok := any(trashElsewhere{local}).(store.BatchMover); !ok {
		t.Fatal("test wrapper lost the embedded method: the drop is not being tested")
	}
}

func TestFeaturesString(t *testing.T) {
	if got := store.AllFeatures.String(); got != "Internal,ListUnordered,ListKeys,MoveManyToInternal,MoveTo,ReportsMD5,DeleteMany,ListSelected,DeleteRecovery,RestoreVersion" {
		t.Errorf("AllFeatures = %q", got)
	}
	if got := (store.FeatureMoveTo | 1<<31).String(); got != "MoveTo" {
		t.Errorf("unknown bits are not named: got %q", got)
	}
	if !store.AllFeatures.Has(store.FeatureListKeys|store.FeatureMoveTo) || store.FeatureListKeys.Has(store.FeatureListKeys|store.FeatureMoveTo) {
		t.Error("Has: wrong")
	}
	if n := strings.Count(store.AllFeatures.String(), ",") + 1; n != len(capabilityTypes) {
		t.Errorf("AllFeatures names %d capabilities, %d are tested", n, len(capabilityTypes))
	}
}
