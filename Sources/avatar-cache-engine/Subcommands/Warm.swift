import ArgumentParser
import AvatarCache
import AvatarCacheLookupCommand
import Foundation

struct Warm: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Warm a cache from profile exports: download, resize, write, prune, report.",
        discussion: """
            \(ExportFormat.detectionHelp)

            Sizes (--budget, --max-bytes) take KB, MB, GB as powers of 1,000 and KiB, MiB, GiB \
            as powers of 1,024; a bare number is bytes.

            The Monica token is read from --monica-token-file or an environment variable \
            (AVATAR_CACHE_MONICA_TOKEN, or the one --monica-token-env names), never from the \
            command line, and is sent only to --monica-host.
            """
    )

    @Argument(help: ArgumentHelp("Export files (or folders); globs are expanded.", valueName: "export"))
    var exports: [String]

    @OptionGroup var cache: CacheOption<String>

    @OptionGroup var options: PipelineOptions

    @OptionGroup var prune: PruneOptions

    @OptionGroup var wait: WaitOption

    /// The settings every flag gives (the exports aside).
    func settings() throws -> PipelineSettings { try Flags.settings(of: cache, options, prune, wait) }

    func run() async throws {
        var settings = try settings()
        settings.inputs = exports.map { PipelineInput(path: $0) }
        try await RunExecution(settings: settings).execute()
    }
}
