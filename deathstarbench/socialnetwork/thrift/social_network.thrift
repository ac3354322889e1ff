// Interface between the orchbench social-network services.
//
// The service graph and the division of work follow DeathStarBench's social
// network so that the RPC fan-out per request is the same; the definitions
// themselves are ours. Every call carries the request ID the front end chose
// so that logs of one request can be joined across services. Transport is
// framed, protocol is binary (see generate.sh and internal/rpc).

namespace go socialnet

// Raised for errors the caller caused (unknown user, bad credentials,
// malformed input, a name already taken) and, as INTERNAL, for failures of
// a service's storage or upstreams; anything else surfaces as a transport
// or application exception. The front end turns the kind into the HTTP
// status (400, 404, 401, 500, 409).
enum ErrorKind {
  BAD_REQUEST = 0,
  NOT_FOUND = 1,
  UNAUTHORIZED = 2,
  INTERNAL = 3,
  CONFLICT = 4,
}

exception ServiceError {
  1: ErrorKind kind,
  2: string message,
}

enum PostType {
  POST = 0,
  REPOST = 1,
  REPLY = 2,
  DM = 3,
}

struct Creator {
  1: i64 user_id,
  2: string username,
}

struct UserMention {
  1: i64 user_id,
  2: string username,
}

struct Url {
  1: string shortened_url,
  2: string expanded_url,
}

struct Media {
  1: i64 media_id,
  2: string media_type,
}

struct Post {
  1: i64 post_id,
  2: Creator creator,
  3: i64 req_id,
  4: string text,
  5: list<UserMention> user_mentions,
  6: list<Media> media,
  7: list<Url> urls,
  8: i64 timestamp,
  9: PostType post_type,
}

// Text after URL shortening, with what was extracted from it.
struct ComposedText {
  1: string text,
  2: list<UserMention> user_mentions,
  3: list<Url> urls,
}

service UniqueIdService {
  i64 ComposeUniqueId(1: i64 req_id, 2: PostType post_type) throws (1: ServiceError se),
}

service UrlShortenService {
  list<Url> ShortenUrls(1: i64 req_id, 2: list<string> urls) throws (1: ServiceError se),
  list<string> ExpandUrls(1: i64 req_id, 2: list<string> shortened_urls) throws (1: ServiceError se),
}

service UserMentionService {
  list<UserMention> ResolveMentions(1: i64 req_id, 2: list<string> usernames) throws (1: ServiceError se),
}

service TextService {
  ComposedText ProcessText(1: i64 req_id, 2: string text) throws (1: ServiceError se),
}

service MediaService {
  list<Media> ComposeMedia(1: i64 req_id, 2: list<string> media_types, 3: list<i64> media_ids) throws (1: ServiceError se),
}

service UserService {
  void RegisterUser(1: i64 req_id, 2: string first_name, 3: string last_name,
      4: string username, 5: string password) throws (1: ServiceError se),
  void RegisterUserWithId(1: i64 req_id, 2: string first_name, 3: string last_name,
      4: string username, 5: string password, 6: i64 user_id) throws (1: ServiceError se),
  // Returns a signed token (JWT, HS256) on success.
  string Login(1: i64 req_id, 2: string username, 3: string password) throws (1: ServiceError se),
  Creator CreatorWithUserId(1: i64 req_id, 2: i64 user_id, 3: string username) throws (1: ServiceError se),
  i64 GetUserId(1: i64 req_id, 2: string username) throws (1: ServiceError se),
  // The reverse of GetUserId; NOT_FOUND for an unregistered ID. Not in
  // DeathStarBench: the front end calls it only to tell an unknown user from
  // an empty timeline.
  string GetUsername(1: i64 req_id, 2: i64 user_id) throws (1: ServiceError se),
}

service SocialGraphService {
  list<i64> GetFollowers(1: i64 req_id, 2: i64 user_id) throws (1: ServiceError se),
  list<i64> GetFollowees(1: i64 req_id, 2: i64 user_id) throws (1: ServiceError se),
  void Follow(1: i64 req_id, 2: i64 user_id, 3: i64 followee_id) throws (1: ServiceError se),
  void Unfollow(1: i64 req_id, 2: i64 user_id, 3: i64 followee_id) throws (1: ServiceError se),
  void FollowWithUsername(1: i64 req_id, 2: string user_name, 3: string followee_name) throws (1: ServiceError se),
  void UnfollowWithUsername(1: i64 req_id, 2: string user_name, 3: string followee_name) throws (1: ServiceError se),
  // Called by the user service on registration so the graph knows the user.
  void InsertUser(1: i64 req_id, 2: i64 user_id) throws (1: ServiceError se),
}

service PostStorageService {
  void StorePost(1: i64 req_id, 2: Post post) throws (1: ServiceError se),
  Post ReadPost(1: i64 req_id, 2: i64 post_id) throws (1: ServiceError se),
  // Posts in the order of post_ids; IDs that are not found are left out.
  list<Post> ReadPosts(1: i64 req_id, 2: list<i64> post_ids) throws (1: ServiceError se),
}

service UserTimelineService {
  void WriteUserTimeline(1: i64 req_id, 2: i64 post_id, 3: i64 user_id, 4: i64 timestamp) throws (1: ServiceError se),
  // Newest first; start and stop are indexes into that order, stop exclusive.
  list<Post> ReadUserTimeline(1: i64 req_id, 2: i64 user_id, 3: i32 start, 4: i32 stop) throws (1: ServiceError se),
}

service HomeTimelineService {
  // Fans the post out to the author's followers and to the mentioned users.
  void WriteHomeTimeline(1: i64 req_id, 2: i64 post_id, 3: i64 user_id, 4: i64 timestamp,
      5: list<i64> user_mentions_id) throws (1: ServiceError se),
  list<Post> ReadHomeTimeline(1: i64 req_id, 2: i64 user_id, 3: i32 start, 4: i32 stop) throws (1: ServiceError se),
}

service ComposePostService {
  void ComposePost(1: i64 req_id, 2: string username, 3: i64 user_id, 4: string text,
      5: list<i64> media_ids, 6: list<string> media_types, 7: PostType post_type) throws (1: ServiceError se),
}
