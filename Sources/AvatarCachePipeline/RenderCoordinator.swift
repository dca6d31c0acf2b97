import AvatarCacheIndex
import AvatarCacheLookup
import AvatarCacheSupport
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
    /// Damage the decoder recovered from (`RenderedAvatar.warning`).
    var warning: String?
    /// What an app draws while the file loads (`CacheEntry.placeholder`).
    var placeholder: Placeholder?

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
        placeholder = entry.placeholder
    }
}

/// Makes sure each distinct photo (by SHA-256 of its bytes) is decoded at most once
/// per cache: reused from disk when already there (`known` asks the index), and shared
/// between jobs that fetch identical bytes at the same time. What this run rendered is
/// remembered only until the index has it (`forget`).
actor RenderCoordinator {
    private let known: @Sendable (String) -> RenderedFiles?
    private var recent: [String: RenderedFiles] = [:]
    private var inFlight: [String: Task<RenderedFiles, Error>] = [:]

    init(known: @escaping @Sendable (String) -> RenderedFiles?) {
        self.known = known
    }

    func files(for contentSHA256: String, render: @escaping @Sendable () async throws -> RenderedFiles) async throws -> RenderedFiles {
        if var existing = recent[contentSHA256] ?? known(contentSHA256) {
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
        recent[contentSHA256] = result
        return result
    }

    /// The index now holds these contents' files.
    func forget(_ contents: [String]) {
        for content in contents { recent[content] = nil }
    }
}
