// Package testutil holds what the unit tests of several packages need
// alike: listeners that hold connections, free ports, stand-in
// executables, the repository's root, and for the end-to-end tests the
// builds of our commands and the processes they run. Only tests import it.
package testutil
