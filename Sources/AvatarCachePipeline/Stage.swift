/// A stage of the run: one input in, one output out. The read stage takes the exports,
/// the download stage a job, the render stage what the download gave, the commit stage a
/// batch of finished jobs; a stage's own limits and state live behind `run`. A stage that
/// needs no waiting (the read, which parses on the calling thread) satisfies it with a
/// synchronous `run`.
protocol Stage: Sendable {
    associatedtype Input
    associatedtype Output
    func run(_ input: Input) async throws -> Output
}
