package outcome_test

import (
	"fmt"

	"github.com/mediactl/mediactl/pkg/outcome"
)

// Two stores of one gc run: one found nothing to do, the other could not be
// read in full. The run is incomplete.
func ExampleWorst() {
	run := outcome.Worst(outcome.OK, outcome.Incomplete)
	fmt.Println(run)
	// Output: incomplete
}
