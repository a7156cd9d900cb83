package owner_test

import (
	"fmt"

	"github.com/mediactl/mediactl/pkg/owner"
)

// An agent-runs key names its user and thread; a forge session file its
// task.
func Example() {
	user, thread, _ := owner.AgentRunsOwner("s3://media/agent-inputs/u1/t7/uploads/scan.pdf")
	fmt.Println(user, thread)
	fmt.Println(owner.TaskID("/srv/agent/.forge/sessions/t-3.json.tmp"))
	rule, _ := owner.ParseBy(owner.Rule{}, "/user/id")
	fmt.Println(rule.Pointer, owner.Lookup([]byte(`{"user": {"id": "u-42"}}`), rule.Pointer))
	// Output:
	// u1 t7
	// t-3
	// /user/id u-42
}
