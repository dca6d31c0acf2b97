import ArgumentParser
import AvatarCache
import Foundation

struct Warm: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Warm a cache from profile exports: download, resize, write, prune, report.",
        discussion: """
            Exports: NexusAI users (JSON array, {"users": [...]} or NDJSON), NexusAI \
            conversations, Monica contacts pages ({"data": [...]}), Jami vCards (.vcf file or folder). \
            The format is detected per export unless --format is given.

            Sizes (--budget, --max-bytes) take KB, MB, GB as powers of 1,000 and KiB, MiB, GiB \
            as powers of 1,024; a bare number is bytes.

            The Monica token is read from --monica-token-file or the AVATAR_CACHE_MONICA_TOKEN \
            environment variable (never from the command line), and is sent only to --monica-host.
            """
    )

    @Argument(help: ArgumentHelp("Export files (or Jami vCard folders).", valueName: "export"))
    var exports: [String]

    @Option(help: ArgumentHelp("Export format: nexus-users, nexus-conversations, monica, jami (default: detected).", valueName: "format"))
    var format: ExportFormat?

    @Option(help: ArgumentHelp("The Monica host the token may be sent to: host or host:port, matched exactly.", valueName: "host"))
    var monicaHost: String?

    @Option(help: ArgumentHelp("File holding the Monica API token (else $AVATAR_CACHE_MONICA_TOKEN).", valueName: "path"))
    var monicaTokenFile: String?

    @Option(help: ArgumentHelp("Monogram files: png or webp (a disc on transparency) or jpeg (a filled square).", valueName: "format"))
    var monogramFormat: OutputFormat = .png

    @OptionGroup var cacheOptions: CacheOptions

    @Option(help: ArgumentHelp("Cache budget; over it, least-recently-used entries are evicted down to 80 %.", valueName: "size"))
    var budget = ByteCount(bytes: 100_000_000)

    @Option(help: ArgumentHelp("Pixels per point: tiers are 110 pt and 300 pt times this.", valueName: "n"))
    var scale = 3

    @Option(help: ArgumentHelp("Sources in flight at once (downloading or decoding).", valueName: "n"))
    var concurrency = 16

    @Option(help: ArgumentHelp("Threads decoding with libvips (default: the number of cores).", valueName: "n"))
    var decodeThreads = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: ArgumentHelp("Whole-download timeout, connect to last byte, in seconds.", valueName: "seconds"))
    var timeout: Double = 30

    @Option(help: ArgumentHelp("Largest download accepted; the stream is cut there.", valueName: "size"))
    var maxBytes = ByteCount(bytes: 20_000_000)

    @Option(help: ArgumentHelp("Largest image accepted, in pixels (width × height, read from the header).", valueName: "n"))
    var maxPixels = 50_000_000

    @Option(help: ArgumentHelp("Redirects followed per source.", valueName: "n"))
    var maxRedirects = 5

    @Option(help: ArgumentHelp("A source fetched less than this many hours ago is used without a request.", valueName: "hours"))
    var ttlHours: Double = 168

    @Option(help: ArgumentHelp("JPEG quality of the cache files, 1–100.", valueName: "q"))
    var quality = 82

    @Flag(help: "Allow photo hosts on loopback, private and link-local networks (refused by default).")
    var allowPrivateNetworks = false

    @Option(help: ArgumentHelp("Write the JSON run report to this file.", valueName: "file"))
    var report: String?

    func run() async throws {
        let logger = cacheOptions.makeLogger()
        var configuration = WarmConfiguration(exports: exports, cacheDirectory: cacheOptions.cacheURL)
        configuration.budgetBytes = budget.bytes
        configuration.scale = scale
        configuration.concurrency = concurrency
        configuration.decodeThreads = decodeThreads
        configuration.fetchLimits.timeout = timeout
        configuration.fetchLimits.maxBytes = Int(maxBytes.bytes)
        configuration.fetchLimits.maxRedirects = maxRedirects
        configuration.maxPixels = maxPixels
        configuration.ttl = ttlHours * 3600
        configuration.quality = quality
        configuration.allowPrivateNetworks = allowPrivateNetworks
        configuration.format = format
        configuration.monogramFormat = monogramFormat
        do {
            configuration.monica = try MonicaToken.load(host: monicaHost, tokenFile: monicaTokenFile)
        } catch {
            throw ExitCodes.fail(error)
        }

        let result: RunReport
        do {
            result = try await WarmPipeline(configuration: configuration, logger: logger).run()
        } catch {
            throw ExitCodes.fail(error)
        }
        print(result.summary)
        print("cache: \(cacheOptions.cacheURL.standardizedFileURL.path)")
        if let report {
            do {
                try result.jsonData().write(to: URL(fileURLWithPath: report), options: .atomic)
            } catch {
                throw ExitCodes.fail(StoreError.io(path: report, reason: "cannot write the report: \(error.localizedDescription)"))
            }
        }
    }
}
