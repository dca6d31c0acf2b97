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
}
