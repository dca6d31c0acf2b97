import ArgumentParser
import AvatarCache
import AvatarCacheLookupCommand
import Foundation

/// `inspect EXPORT…`: what a warm would read, before it runs. Reads each export as warm
/// does (the same flags), downloads nothing, writes nothing, and prints per export where
/// its people were found and why, counts, a sample of people and the `--map` line that
/// reads the same people.
struct Inspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what a warm would read from exports: the people found, how they were chosen, a sample, and the --map line that reproduces it. Downloads nothing, writes nothing.",
        discussion: """
            Takes warm's flags (--map, --format, --storage-bucket, …), so a warm's command line \
            with "warm" replaced by "inspect" shows what that warm would read; --cache is accepted \
            and not opened. Passwords and their hashes in an Auth export are never shown.

            \(ExportFormat.detectionHelp)
            """
    )

    @Argument(help: ArgumentHelp("Export files (or folders); globs are expanded.", valueName: "export"))
    var exports: [String]

    @OptionGroup var cache: CacheOption<String?>

    @Flag(help: "Print JSON (one object per export) instead of text.")
    var json = false

    @OptionGroup var options: PipelineOptions

    // Warm's too, so that its command line is taken whole; nothing is pruned or locked.
    @OptionGroup var prune: PruneOptions

    @OptionGroup var wait: WaitOption

    func run() async throws {
        let inspections: [ExportInspection]
        do {
            var settings = try Flags.settings(of: cache, options, prune, wait)
            // Nothing is written: a cache directory is only what the configuration requires.
            settings[Settings.cache] = settings[Settings.cache] ?? FileManager.default.temporaryDirectory.path
            settings.inputs = exports.map { PipelineInput(path: $0) }
            let configuration = try settings.configuration()
            let formats = try configuration.exportFormatsChecked()
            inspections = try zip(configuration.exports, formats).map { path, format in
                try ExportInspection.inspect(path, format: format, limits: configuration.readerLimits, map: configuration.fieldMap)
            }
        } catch {
            throw ExitCodes.fail(error)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(inspections), as: UTF8.self))
        } else {
            print(inspections.map(Self.text).joined(separator: "\n"))
        }
    }

    /// One export's inspection as a person reads it.
    static func text(_ inspection: ExportInspection) -> String {
        var lines = ["\(inspection.export) (\(inspection.format))"]
        for choice in inspection.choices {
            lines.append("  people from \(choice.collection.hasPrefix("node ") || choice.collection == "the records" ? choice.collection : "collection \"\(choice.collection)\"") (\(choice.documents) document\(choice.documents == 1 ? "" : "s"))")
            if let why = choice.collectionEvidence { lines.append("    why: \(why)") }
            let width = choice.roles.map(\.key.count).max() ?? 0
            for role in choice.roles {
                var line = "    \(role.key.padding(toLength: width, withPad: " ", startingAt: 0)) = \(role.paths.joined(separator: "|"))"
                if role.mapped { line += " (the map's)" } else if let evidence = role.evidence { line += ": \(evidence)" }
                lines.append(line)
                if !role.runnersUp.isEmpty { lines.append("      not: " + role.runnersUp.joined(separator: "; ")) }
            }
            if !choice.counts.isEmpty {
                lines.append("    had: " + choice.counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
            }
            lines.append("    reproduce: \(choice.mapLine)")
        }
        if inspection.choices.isEmpty {
            // No fields chosen: what the reader said instead (its own format's names, Auth alone).
            lines.append(inspection.notes.isEmpty ? "  read by the \(inspection.format) format's own fields" : inspection.notes.map { "  \($0)" }.joined(separator: "\n"))
        }
        lines.append("  people: \(inspection.people), \(inspection.peopleWithPhoto) with a photo, \(inspection.people - inspection.peopleWithPhoto) monograms; bad records: \(inspection.badRecords)")
        for count in inspection.counts { lines.append("  \(count.source): \(count)") }
        if !inspection.sample.isEmpty {
            lines.append("  sample:")
            for person in inspection.sample {
                lines.append("    \(person.id)\t\(person.name.isEmpty ? "(no name)" : person.name)\t\(person.initials)\t\(person.photo ?? "(monogram)")")
            }
        }
        for bad in inspection.firstBadRecords { lines.append("  bad: \(bad)") }
        return lines.joined(separator: "\n")
    }
}
