// Package dataset is the media microservices' data: the movies a review can
// be composed for, their cast, plots and movie information, and the users who
// compose reviews, with the loader that writes them through the front end's
// HTTP API and the verifier that reads them back.
//
// The titles are the 1000 of DeathStarBench's compose-review.lua (Titles).
// The original fills the rest from TMDB files (casts.json, movies.json) that
// cannot be obtained here, so everything else is synthetic: each distinct
// title gets, from its position alone, a movie id, three to six cast
// members with names, genders and introductions, a plot, media ids and a
// rating. The values are made by a fixed hash, not math/rand, so that a
// deployment loaded by one build is verified by any other.
//
// Movie ids: the k-th distinct title of Titles (k = 1, 2, ..., in order of
// first occurrence) has movie id "tt" followed by k in seven digits
// (MovieIDFor), so Titles[0] is tt0000001. Its plot id is k and its cast
// info ids are 10k .. 10k+5, unique across movies.
//
// Users are username_N / password_N with first name first_name_N and last
// name last_name_N, N = 1..DefaultUsers, as DeathStarBench's scripts name
// them.
package dataset
