import Synchronization

extension WarmPipeline {
    /// The sources past their download (or needing none) waiting for the render stage, in
    /// the order they came: a taken one's place is emptied at once (its body must not
    /// outlive its render), and the taken are dropped from the front now and then.
    struct RenderQueue {
        private var items: [DownloadStage.Output?] = []
        private var head = 0

        var count: Int { items.count - head }
        var isEmpty: Bool { head == items.count }

        mutating func append(_ item: DownloadStage.Output) { items.append(item) }

        mutating func removeFirst() -> DownloadStage.Output {
            let item = items[head]!
            items[head] = nil
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64 && head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
            return item
        }
    }

    /// The render stage's places, taken by the loop for the sources queued for it and by a
    /// download task for its own body when nothing is queued (so the queued go first).
    final class RenderPlaces: Sendable {
        private let places: Places
        private let waiting = Atomic<Int>(0)

        init(_ limit: Int) { places = Places(limit) }

        func take() -> Bool { places.take() }

        func takeIfNoneQueued() -> Bool { waiting.load(ordering: .acquiring) == 0 && places.take() }

        func release() { places.release() }

        /// How many wait in the loop's queue.
        func queued(_ count: Int) { waiting.store(count, ordering: .releasing) }
    }
}
