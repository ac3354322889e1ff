package password

import "testing"

func TestHashIsSaltedAndMatchesOnlyItsPassword(t *testing.T) {
	salt := NewSalt()
	if len(salt) != 32 || NewSalt() == salt {
		t.Fatalf("salt %q: want 32 hex digits, different each time", salt)
	}
	stored := Hash("password_1", salt)
	if stored == Hash("password_1", NewSalt()) {
		t.Fatal("the salt does not change the hash")
	}
	if !Matches("password_1", salt, stored) || Matches("password_2", salt, stored) {
		t.Fatal("Matches accepts the wrong password or refuses the right one")
	}
}
