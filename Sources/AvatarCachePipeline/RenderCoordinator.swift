import AvatarCacheStore
import AvatarCacheModel
import AvatarCacheSupport
import Foundation
import Synchronization

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
///
/// The job that claims a content renders it in its own task; a job that brings the same
/// bytes meanwhile waits for that render. A lock, not an actor: a photo passes through
/// it without leaving its thread (two actor hops and a task of its own each, before).
final class RenderCoordinator: Sendable {
    private struct State {
        var recent: [String: RenderedFiles] = [:]
        /// Contents being rendered, and the jobs waiting for them.
        var inFlight: [String: [CheckedContinuation<RenderedFiles?, Error>]] = [:]
    }

    private let known: @Sendable (String) -> RenderedFiles?
    private let state = Mutex(State())

    init(known: @escaping @Sendable (String) -> RenderedFiles?) {
        self.known = known
    }

    func files(for contentSHA256: String, render: @Sendable () async throws -> RenderedFiles) async throws -> RenderedFiles {
        while true {
            if var existing = state.withLock({ $0.recent[contentSHA256] }) ?? known(contentSHA256) {
                existing.renderedNow = false
                return existing
            }
            enum Claim { case rendered(RenderedFiles), renderedElsewhere, mine }
            let claim = state.withLock { state -> Claim in
                if let recent = state.recent[contentSHA256] { return .rendered(recent) }
                if state.inFlight[contentSHA256] != nil { return .renderedElsewhere }
                state.inFlight[contentSHA256] = []
                return .mine
            }
            switch claim {
            case .rendered(var existing):
                existing.renderedNow = false
                return existing
            case .renderedElsewhere:
                // Nil: that render failed before this job waited for it; look again.
                let shared = try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<RenderedFiles?, Error>) in
                    let result = state.withLock { state -> RenderedFiles?? in
                        if state.inFlight[contentSHA256] != nil {
                            state.inFlight[contentSHA256]!.append(waiter)
                            return .none
                        }
                        return .some(state.recent[contentSHA256])
                    }
                    if case let .some(now) = result { waiter.resume(returning: now) }
                }
                if var shared {
                    shared.renderedNow = false
                    return shared
                }
            case .mine:
                // Its look at the index and its claim were two steps: the files may have
                // been committed, and forgotten here, in between. Written again under the
                // same names they would replace durable files with ones not yet synced.
                if var existing = known(contentSHA256) {
                    existing.renderedNow = false
                    let waiters = state.withLock { $0.inFlight.removeValue(forKey: contentSHA256) } ?? []
                    for waiter in waiters { waiter.resume(returning: existing) }
                    return existing
                }
                let result: RenderedFiles
                do {
                    result = try await render()
                } catch {
                    let waiters = state.withLock { $0.inFlight.removeValue(forKey: contentSHA256) } ?? []
                    for waiter in waiters { waiter.resume(throwing: error) }
                    throw error
                }
                let waiters = state.withLock { state in
                    state.recent[contentSHA256] = result
                    return state.inFlight.removeValue(forKey: contentSHA256) ?? []
                }
                for waiter in waiters { waiter.resume(returning: result) }
                return result
            }
        }
    }

    /// The index now holds these contents' files.
    func forget(_ contents: [String]) {
        state.withLock { state in
            for content in contents { state.recent[content] = nil }
        }
    }
}
