import Synchronization

extension WarmPipeline {
    /// The render stage's places, taken by the scheduler for the sources queued for it and by a
    /// download task for its own body when nothing is queued (so the queued go first).
    final class RenderPlaces: Sendable {
        private let places: Places
        private let waiting = Atomic<Int>(0)

        init(_ limit: Int) { places = Places(limit) }

        func take() -> Bool { places.take() }

        func takeIfNoneQueued() -> Bool { waiting.load(ordering: .acquiring) == 0 && places.take() }

        func release() { places.release() }

        /// How many wait in the scheduler's queue.
        func queued(_ count: Int) { waiting.store(count, ordering: .releasing) }
    }
}
