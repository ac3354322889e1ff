// Package testutil holds what the unit tests of several packages need
// alike: listeners that hold connections, free ports, stand-in
// executables, the repository's root. Only tests import it.
package testutil
