package conformance_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/sessions/sessionstest/conformance"
)

// A folder of forge session files runs the suite: the fixture plants each
// unit as a file, says where it is, and reads and replaces files as forge
// does.
func Example() {
	_ = func(t *testing.T) {
		conformance.Run(t, func(t *testing.T, units []conformance.Unit) *conformance.Fixture {
			dir := t.TempDir()
			fx := &conformance.Fixture{
				Spec:       dir,
				Counts:     sessions.Counts{Documents: int64(len(units))},
				Rewritable: true,
				Read: func(t testing.TB, p ref.Place) []byte {
					b, _ := os.ReadFile(p.Document)
					return b
				},
				Write: func(t testing.TB, units map[ref.Place][]byte) {
					for p, b := range units {
						os.WriteFile(p.Document+".tmp", b, 0o600)
						os.Rename(p.Document+".tmp", p.Document)
					}
				},
			}
			for _, u := range units {
				path := filepath.Join(dir, u.ID+".json")
				os.WriteFile(path, []byte(u.JSON), 0o600)
				fx.Places = append(fx.Places, ref.Place{Source: dir, Document: path})
			}
			return fx
		})
	}
}

func TestUnits(t *testing.T) {
	us := conformance.Units(4)
	for i, u := range us {
		if len(u.Ref) != len(u.Alt) {
			t.Errorf("unit %d: Ref %q and Alt %q differ in length", i, u.Ref, u.Alt)
		}
	}
	// forge's encoding/json escapes '&'; coffer's json.dumps escapes non-ASCII.
	if !strings.Contains(us[0].JSON, `Cats \u0026 dogs`) || !strings.Contains(us[1].JSON, `caf\u00e9 \ud83d\udc31`) || !strings.Contains(us[1].JSON, `", "`) {
		t.Errorf("units not as the runtimes write them:\n%s\n%s", us[0].JSON, us[1].JSON)
	}
}
