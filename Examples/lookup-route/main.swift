// Embedding AvatarCacheLookup in a server (docs/embedding.md): the handler a route such as
// GET /avatars/{userID}?size=55&scale=3 calls, with no web framework, so that any one can
// wrap it. This file builds as the `lookup-route` example, linked against AvatarCacheLookup
// alone; run it as `lookup-route <cache> <user id> [size] [scale]` to print one answer.
import AvatarCacheLookup
import Foundation

/// What the route sends: the file to serve (or nil: draw `initials` on `color`), a strong
/// ETag, and what to draw while the file loads.
struct AvatarResponse: Encodable {
    var status: Int
    var file: String?
    var etag: String?
    var kind: String
    var initials: String?
    var color: String?
    var textColor: String?
    var placeholder: Placeholder?
}

/// One per process, opened at start-up and shared by every request (it is Sendable);
/// each lookup is then a few indexed queries, a fraction of a millisecond.
final class AvatarRoute: Sendable {
    let lookup: CacheLookup

    init(cache: String) throws {
        lookup = try CacheLookup(directory: CacheDirectory(root: URL(fileURLWithPath: cache)))
    }

    func respond(userID: String, size: Double = 55, scale: Int = 3) -> AvatarResponse {
        do {
            let answer = try lookup.lookup(userID: userID, viewPoints: size, scale: scale)
            // A cache file is named by the SHA-256 of its source and the tier, and never
            // rewritten under the same name: the name is a strong validator.
            let etag = answer.file.map { "\"" + URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent + "\"" }
            return AvatarResponse(status: 200, file: answer.file, etag: etag, kind: answer.kind.rawValue, initials: answer.initials,
                                  color: answer.color, textColor: answer.textColor, placeholder: answer.placeholder)
        } catch is CacheLookup.NotFound {
            return AvatarResponse(status: 404, kind: "none")
        } catch {
            return AvatarResponse(status: 503, kind: "none")
        }
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: lookup-route <cache> <user id> [size] [scale]\n".utf8))
    exit(64)
}
do {
    let route = try AvatarRoute(cache: arguments[1])
    let response = route.respond(userID: arguments[2], size: arguments.count > 3 ? Double(arguments[3]) ?? 55 : 55,
                                 scale: arguments.count > 4 ? Int(arguments[4]) ?? 3 : 3)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    print(String(decoding: try encoder.encode(response), as: UTF8.self))
    exit(response.status == 200 ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("lookup-route: \(error)\n".utf8))
    exit(73)
}
