import ArgumentParser
import AvatarCache
import AvatarCacheLookupCommand
import Foundation

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a pipeline file (pipelines/*.yml): its inputs, sizes, budget, TTL, limits and outputs.",
        discussion: """
            Keys are the flag names of `warm` without the dashes' prefix (budget, ttl-hours, \
            max-bytes, …) plus `cache` and `inputs`; a flag given here overrides the file's key of \
            the same name. ${NAME} and ${NAME:-default} in values come from the environment. \
            A wrong key or value fails before any work, naming the file, line and key.
            """
    )

    @Argument(help: ArgumentHelp("The pipeline file.", valueName: "pipeline.yml"))
    var file: String

    @OptionGroup var cache: CacheOption<String?>

    @Option(help: ArgumentHelp("Overrides the file's inputs; repeat for several.", valueName: "path"))
    var input: [String] = []

    @OptionGroup var options: PipelineOptions

    @OptionGroup var prune: PruneOptions

    @OptionGroup var wait: WaitOption

    func run() async throws {
        // Read once (validated already): the log format applies to the file's errors too.
        var overrides = try Flags.settings(of: cache, options, prune, wait)
        if let format = overrides[Settings.logFormat] { ExitCodes.errorFormat = format }
        let fromFile: PipelineSettings
        do {
            fromFile = try PipelineFile.load(file)
        } catch {
            throw ExitCodes.fail(error)
        }
        overrides.inputs = input.map { PipelineInput(path: $0) }
        try await RunExecution(settings: fromFile.overridden(by: overrides)).execute()
    }
}
