package dataset

import "strconv"

// DefaultUsers is how many users DeathStarBench's scripts register, and
// how many compose-review.lua draws from (math.random(1000)).
const DefaultUsers = 1000

// User is one user as /wrk2-api/user/register takes it.
type User struct {
	Username, Password, FirstName, LastName string
}

// UserN is user n (from 1).
func UserN(n int) User {
	s := strconv.Itoa(n)
	return User{Username: "username_" + s, Password: "password_" + s, FirstName: "first_name_" + s, LastName: "last_name_" + s}
}
