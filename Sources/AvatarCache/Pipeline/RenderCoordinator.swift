import Foundation

/// The files made from one content hash, and what they were made from.
struct RenderedFiles: Sendable {
    /// The source format; nil for a monogram.
    var format: ImageFormat?
    var sourceWidth: Int?
    var sourceHeight: Int?
    /// Tier in pixels, as text -> file.
    var files: [String: CacheFile]
    /// True for the one job that rendered them in this run; false for reuse.
    var renderedNow: Bool

    init(format: ImageFormat?, sourceWidth: Int?, sourceHeight: Int?, files: [String: CacheFile], renderedNow: Bool) {
        self.format = format
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.files = files
        self.renderedNow = renderedNow
    }

    /// Each file once, although two tiers may share one.
    var distinctFiles: [CacheFile] {
        Array(Dictionary(files.values.map { ($0.filename, $0) }, uniquingKeysWith: { first, _ in first }).values)
    }

    init(_ entry: CacheEntry) {
        self.init(format: entry.kind == .monogram ? nil : entry.sourceFormat, sourceWidth: entry.sourceWidth, sourceHeight: entry.sourceHeight, files: entry.files, renderedNow: false)
    }
}

/// Makes sure each distinct photo (by SHA-256 of its bytes) is decoded at most once
/// per cache: reused from disk when already there, and shared between jobs that fetch
/// identical bytes at the same time.
actor RenderCoordinator {
    private var known: [String: RenderedFiles]
    private var inFlight: [String: Task<RenderedFiles, Error>] = [:]

    init(known: [String: RenderedFiles]) {
        self.known = known
    }

    func files(for contentSHA256: String, render: @escaping @Sendable () async throws -> RenderedFiles) async throws -> RenderedFiles {
        if var existing = known[contentSHA256] {
            existing.renderedNow = false
            return existing
        }
        if let task = inFlight[contentSHA256] {
            var shared = try await task.value
            shared.renderedNow = false
            return shared
        }
        let task = Task { try await render() }
        inFlight[contentSHA256] = task
        defer { inFlight[contentSHA256] = nil }
        let result = try await task.value
        known[contentSHA256] = result
        return result
    }
}

/// Renders a photo and writes its tier files; runs on a decode pool thread, so the
/// blocking file writes stay off the cooperative pool too.
struct RenderWriter: Sendable {
    let renderer: AvatarRenderer
    let monograms: MonogramRenderer
    let directory: CacheDirectory

    func renderPhoto(_ bytes: [UInt8], contentSHA256: String) throws -> RenderedFiles {
        let avatar: RenderedAvatar
        do {
            avatar = try renderer.render(bytes)
        } catch let error as ImagingError {
            throw SourceFailure(error)
        }
        let files = try write(avatar.tiers, contentSHA256: contentSHA256, format: renderer.outputFormat)
        return RenderedFiles(format: avatar.format, sourceWidth: avatar.sourceWidth, sourceHeight: avatar.sourceHeight, files: files, renderedNow: true)
    }

    func renderMonogram(_ spec: MonogramSpec, contentSHA256: String) throws -> RenderedFiles {
        let tiers: [RenderedTier]
        do {
            tiers = try monograms.render(spec)
        } catch let error as ImagingError {
            throw SourceFailure(error)
        }
        let files = try write(tiers, contentSHA256: contentSHA256, format: monograms.outputFormat)
        return RenderedFiles(format: nil, sourceWidth: nil, sourceHeight: nil, files: files, renderedNow: true)
    }

    /// Writes each tier; takes tiers smallest first.
    private func write(_ tiers: [RenderedTier], contentSHA256: String, format: OutputFormat) throws -> [String: CacheFile] {
        var files: [String: CacheFile] = [:]
        var larger: CacheFile?
        for tier in tiers.reversed() {
            // A source smaller than a tier is not upscaled, so two tiers can come out
            // the same: the smaller one then shares the larger one's file.
            if let larger, larger.width == tier.side {
                files[String(tier.tier)] = larger
                continue
            }
            let name = CacheDirectory.fileName(contentSHA256: contentSHA256, tier: tier.tier, format: format)
            try directory.writeAtomically(tier.bytes, to: name)
            let file = CacheFile(filename: name, width: tier.side, height: tier.side, fileSize: Int64(tier.bytes.count),
                                 sha256: SHA256Hex.of(tier.bytes))
            files[String(tier.tier)] = file
            larger = file
        }
        return files
    }
}
