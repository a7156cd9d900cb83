package storelock

import "os"

// pidNamespace names this process's process id namespace: the target of
// /proc/self/ns/pid ("pid:[4026531836]"), the same for every process of one
// namespace and different for each other. "" when /proc is not mounted.
func pidNamespace() string {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return ns
}
