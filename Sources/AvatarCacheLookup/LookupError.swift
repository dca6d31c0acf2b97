import AvatarCacheSupport
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a lookup gave no answer: the one error ``CacheLookup`` throws.
public enum LookupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The directory holds no avatar-cache index (nor a `metadata.json` to import).
    case notACache(directory: URL)
    /// The cache was written by avatar-cache before the index existed, or by a version
    /// whose index a reader cannot use as it is: any command that writes the cache
    /// (`avatar-cache verify`, a warm-up) upgrades it; `avatar-cache lookup` does so itself.
    case needsUpgrade(directory: URL, reason: String)
    /// The index could not be read: a damaged or truncated file, or one SQLite refuses.
    case damagedIndex(file: URL, reason: String)
    /// The user id, or the photo URL, is not in the cache: which one, and its id or URL.
    case notFound(Missing)
    /// An argument out of its range (a view size that is not a positive number, a scale
    /// outside 1…8, an empty id).
    case invalidArgument(String)

    /// What a lookup asked for that the cache does not hold. Its description names it as
    /// the errors do: `user "u42"`, `URL https://photos.example.com/a.jpg` (a URL's
    /// query and credentials left out, as everywhere avatar-cache shows one).
    public enum Missing: Sendable, Hashable, CustomStringConvertible {
        case user(id: String)
        case photo(url: String)

        public var description: String {
            switch self {
            case let .user(id): "user \"\(id)\""
            case let .photo(url): "URL \(shownURL(url))"
            }
        }
    }

    public var description: String {
        switch self {
        case let .notACache(directory):
            return "\(directory.path) is not an avatar-cache cache: it has no index.sqlite (run `avatar-cache warm` into it first)"
        case let .needsUpgrade(directory, reason):
            return "the cache in \(directory.path) \(reason): run `avatar-cache verify --cache \(directory.path)` (or any warm-up) once to upgrade it"
        case let .damagedIndex(file, reason):
            return "the cache's index \(file.path) cannot be read: \(reason) (`avatar-cache verify --repair` rebuilds what it can)"
        case let .notFound(what):
            return "\(what) is not in the cache"
        case let .invalidArgument(problem):
            return problem
        }
    }
}
