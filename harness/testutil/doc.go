// Package testutil holds what the unit tests of several packages
// need alike: listeners that hold connections, free ports, the
// repository's root. Only tests import it.
package testutil
