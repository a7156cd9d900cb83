package outcome_test

import (
	"encoding/json"
	"testing"

	"github.com/mediactl/mediactl/pkg/outcome"
)

func TestWorstOrder(t *testing.T) {
	order := []outcome.Outcome{outcome.OK, outcome.Found, outcome.Refused, outcome.Incomplete, outcome.Interrupted}
	for i, a := range order {
		for j, b := range order {
			want := a
			if j > i {
				want = b
			}
			if got := outcome.Worst(a, b); got != want {
				t.Errorf("Worst(%v, %v) = %v, want %v", a, b, got, want)
			}
		}
	}
	if outcome.Worst() != outcome.OK {
		t.Error("Worst() of nothing is not ok")
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, o := range []outcome.Outcome{outcome.OK, outcome.Found, outcome.Refused, outcome.Incomplete, outcome.Interrupted} {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var back outcome.Outcome
		if err := json.Unmarshal(b, &back); err != nil || back != o {
			t.Fatalf("%s: back %v, %v", b, back, err)
		}
	}
	var o outcome.Outcome
	if err := json.Unmarshal([]byte(`"fine"`), &o); err == nil {
		t.Fatal("an unknown outcome was read")
	}
}
