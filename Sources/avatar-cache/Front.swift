import ArgumentParser
import AvatarCacheLookup
import AvatarCacheSupport
import AvatarCacheLookupCommand
import AvatarCacheModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The `avatar-cache` users run. A lookup is answered here, in a process that loads no
/// image, HTTP or YAML library (the apps' and notification services' path: a few
/// milliseconds, where loading libvips and what it links takes most of 40); every other
/// command is handed, by `execv` (same process id, same arguments), to the engine: the
/// program with the whole pipeline, installed beside this one (`avatar-cache-engine` in
/// the same directory, as a build leaves it, or `../libexec/avatar-cache/` from it, as the
/// package and the tarball install it).
@main
struct Front {
    static func main() async {
        let arguments = CommandLine.arguments
        if arguments.count > 1, arguments[1] == Lookup.configuration.commandName ?? "lookup" {
            // A cache written before the index is imported by the engine's lookup, however
            // the arguments were parsed.
            Lookup.prepareCache = { root in
                if Lookup.needsImport(root) { Engine.handOver(arguments) }
            }
            // The forms services pass straight to the lookup; help and mistakes through
            // swift-argument-parser, which words them as the engine does.
            if let request = Lookup.Request.parseCommonForm(Array(arguments.dropFirst(2))) {
                do {
                    try request.run()
                    exit(0)
                } catch {
                    // As swift-argument-parser ends the engine's lookup: an exit code as it is.
                    FrontCommand.exit(withError: error)
                }
            }
            await FrontCommand.main(Array(arguments.dropFirst()))
            return
        }
        // The version is the front's own (the engine is built from the same commit):
        // answered here, without starting the engine and the libraries it loads.
        if arguments.count == 2, arguments[1] == "--version" {
            print(AvatarCacheVersion.string)
            exit(0)
        }
        Engine.handOver(arguments)
    }
}

/// The root command as the engine names it, with the one subcommand run here (its help
/// reads "avatar-cache lookup").
struct FrontCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "avatar-cache", version: AvatarCacheVersion.string, subcommands: [Lookup.self])
}

enum Engine {
    static let name = "avatar-cache-engine"

    /// Where the engine may be, nearest first, from this binary's own directory.
    static func candidates() -> [String] {
        let own = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                      ?? CommandLine.arguments[0]).deletingLastPathComponent()
        return [own.appendingPathComponent(name).path,
                own.appendingPathComponent("../libexec/avatar-cache/\(name)").standardizedFileURL.path]
    }

    /// Replaces this process with the engine, or exits 70 naming where it looked.
    static func handOver(_ arguments: [String]) -> Never {
        let places = candidates()
        for path in places where FileManager.default.isExecutableFile(atPath: path) {
            var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
            argv.append(nil)
            execv(path, argv)
            writeToStandardError("avatar-cache: error: cannot start \(path): \(String(cString: strerror(errno)))\n")
            exit(70)
        }
        writeToStandardError("avatar-cache: error: the engine that runs every command but lookup is missing: no \(places.joined(separator: " nor ")) (reinstall avatar-cache)\n")
        exit(70)
    }
}
