// Interface between the orchbench media-microservices services.
//
// The service graph and the division of work follow DeathStarBench's media
// microservices, so that a compose-review makes the same calls in the same
// order (four uploads from the front end, a rendezvous of five parts in
// compose-review's memcached, three stores in parallel); the definitions are
// ours. Every call carries the request ID the front end chose, which is also
// the rendezvous key. Transport is framed, protocol is binary (see
// generate.sh and deathstarbench/internal/rpc). The Get/Read calls marked
// "ours" serve the front end's /orchbench read routes, which the original
// does not have.

namespace go mediamicro

// The front end turns the kind into the HTTP status: 400, 404, 500, 500.
enum ErrorKind {
  BAD_REQUEST = 0,
  NOT_FOUND = 1,
  INTERNAL = 2,
  CONFLICT = 3,
}

exception ServiceError {
  1: ErrorKind kind,
  2: string message,
}

struct Review {
  1: i64 review_id,
  2: i64 user_id,
  3: i64 req_id,
  4: string text,
  5: string movie_id,
  6: i32 rating,
  7: i64 timestamp,
}

struct CastInfo {
  1: i64 cast_info_id,
  2: string name,
  3: bool gender,
  4: string intro,
}

struct Cast {
  1: i32 cast_id,
  2: string character,
  3: i64 cast_info_id,
}

struct MovieInfo {
  1: string movie_id,
  2: string title,
  3: list<Cast> casts,
  4: i64 plot_id,
  5: list<string> thumbnail_ids,
  6: list<string> photo_ids,
  7: list<string> video_ids,
  8: double avg_rating,
  9: i32 num_rating,
}

struct Page {
  1: MovieInfo movie_info,
  2: list<Review> reviews,
  3: list<CastInfo> cast_infos,
  4: string plot,
}

struct User {
  1: i64 user_id,
  2: string first_name,
  3: string last_name,
  4: string username,
}

struct RatingTally {
  1: string movie_id,
  2: i64 sum,
  3: i64 count,
}

service UniqueIdService {
  // Makes the review's ID and hands it to compose-review.
  void UploadUniqueId(1: i64 req_id) throws (1: ServiceError se)
}

service MovieIdService {
  // Looks the title up and hands the movie ID to compose-review and the
  // rating to the rating service, in parallel.
  void UploadMovieId(1: i64 req_id, 2: string title, 3: i32 rating) throws (1: ServiceError se)
  void RegisterMovieId(1: i64 req_id, 2: string title, 3: string movie_id) throws (1: ServiceError se)
  // ours
  string GetMovieId(1: i64 req_id, 2: string title) throws (1: ServiceError se)
}

service TextService {
  void UploadText(1: i64 req_id, 2: string text) throws (1: ServiceError se)
}

service RatingService {
  // Adds the rating to the movie's tally and hands it to compose-review.
  void UploadRating(1: i64 req_id, 2: string movie_id, 3: i32 rating) throws (1: ServiceError se)
  // ours
  RatingTally ReadRating(1: i64 req_id, 2: string movie_id) throws (1: ServiceError se)
}

service UserService {
  void RegisterUser(1: i64 req_id, 2: string first_name, 3: string last_name, 4: string username, 5: string password) throws (1: ServiceError se)
  // Looks the username up and hands the user ID to compose-review.
  void UploadUserWithUsername(1: i64 req_id, 2: string username) throws (1: ServiceError se)
  // ours
  User GetUser(1: i64 req_id, 2: string username) throws (1: ServiceError se)
}

service ComposeReviewService {
  void UploadText(1: i64 req_id, 2: string text) throws (1: ServiceError se)
  void UploadRating(1: i64 req_id, 2: i32 rating) throws (1: ServiceError se)
  void UploadUniqueId(1: i64 req_id, 2: i64 review_id) throws (1: ServiceError se)
  void UploadMovieId(1: i64 req_id, 2: string movie_id) throws (1: ServiceError se)
  void UploadUserId(1: i64 req_id, 2: i64 user_id) throws (1: ServiceError se)
}

service ReviewStorageService {
  void StoreReview(1: i64 req_id, 2: Review review) throws (1: ServiceError se)
  list<Review> ReadReviews(1: i64 req_id, 2: list<i64> review_ids) throws (1: ServiceError se)
}

service UserReviewService {
  void UploadUserReview(1: i64 req_id, 2: i64 user_id, 3: i64 review_id, 4: i64 timestamp) throws (1: ServiceError se)
  list<Review> ReadUserReviews(1: i64 req_id, 2: i64 user_id, 3: i32 start, 4: i32 stop) throws (1: ServiceError se)
}

service MovieReviewService {
  void UploadMovieReview(1: i64 req_id, 2: string movie_id, 3: i64 review_id, 4: i64 timestamp) throws (1: ServiceError se)
  list<Review> ReadMovieReviews(1: i64 req_id, 2: string movie_id, 3: i32 start, 4: i32 stop) throws (1: ServiceError se)
}

service CastInfoService {
  void WriteCastInfo(1: i64 req_id, 2: i64 cast_info_id, 3: string name, 4: bool gender, 5: string intro) throws (1: ServiceError se)
  list<CastInfo> ReadCastInfo(1: i64 req_id, 2: list<i64> cast_ids) throws (1: ServiceError se)
}

service PlotService {
  void WritePlot(1: i64 req_id, 2: i64 plot_id, 3: string plot) throws (1: ServiceError se)
  string ReadPlot(1: i64 req_id, 2: i64 plot_id) throws (1: ServiceError se)
}

service MovieInfoService {
  void WriteMovieInfo(1: i64 req_id, 2: MovieInfo info) throws (1: ServiceError se)
  MovieInfo ReadMovieInfo(1: i64 req_id, 2: string movie_id) throws (1: ServiceError se)
}

service PageService {
  // Movie info, then its cast, plot and reviews in parallel.
  Page ReadPage(1: i64 req_id, 2: string movie_id, 3: i32 review_start, 4: i32 review_stop) throws (1: ServiceError se)
}
