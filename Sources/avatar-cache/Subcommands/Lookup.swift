import ArgumentParser
import AvatarCache
import Foundation

struct Lookup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the file to draw for a user or a photo URL, for a view of a given size.",
        discussion: """
            The tier is the smallest at least max(size × 2, 110) points (seed 000), else the largest. \
            Counts as an access for the prune (recorded in the cache's index). \
            Exit code 66 when the user or URL is not in the cache.
            """
    )

    @Option(help: ArgumentHelp("The cache directory.", valueName: "dir"))
    var cache: String

    @Option(help: ArgumentHelp("A user id from an export (a message's sender id).", valueName: "id"))
    var user: String?

    @Option(help: ArgumentHelp("A photo URL.", valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("The view size in points.", valueName: "pt"))
    var size: Double = 55

    @Option(help: ArgumentHelp("Pixels per point the cache was warmed at.", valueName: "n"))
    var scale = 3

    @Flag(help: "Print JSON: initials, color, textColor, file, kind (photo, monogram or none), tier.")
    var json = false

    func validate() throws {
        guard (user == nil) != (url == nil) else { throw ValidationError("give exactly one of --user and --url") }
        guard size > 0 else { throw ValidationError("--size must be more than 0") }
        guard (1...8).contains(scale) else { throw ValidationError("--scale must be between 1 and 8") }
    }

    func run() async throws {
        let answer: CacheLookup.Answer
        do {
            let lookup = try CacheLookup(directory: CacheDirectory(root: URL(fileURLWithPath: cache)))
            answer = try lookup.lookup(userID: user, url: url, viewPoints: size, scale: scale)
        } catch {
            throw ExitCodes.fail(error)
        }
        if json {
            try printJSON(answer)
        } else if let file = answer.file {
            print(file)
        } else {
            print("no cached image: draw \(answer.initials ?? "??") in \(answer.textColor ?? "") on \(answer.color ?? "")")
        }
    }
}
