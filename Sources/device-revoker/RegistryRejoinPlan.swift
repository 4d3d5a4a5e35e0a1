import ArgumentParser
import CLISupport
import FoundationEssentials
import VaultCore
import VaultRegistry

extension Registry {
    struct RejoinPlan: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rejoin-plan",
            abstract: "The conversations a newly registered device must be added to, as mls.add operations (JSON Lines).",
            discussion: """
            A device with no key packages (key_packages_available 0) cannot be added by the \
            server: its plan is empty, and the note names the conversations it will join once it \
            publishes some.

            Examples:
              device-revoker registry rejoin-plan --db registry.sqlite \\
                --device 'did:plc:josh#c3d4'
            """
        )
        @OptionGroup var database: Database
        @Option(help: ArgumentHelp("The new device.", valueName: "DID#DEVICE")) var device: String

        func run() throws {
            guard let pair = DeviceRegistry.deviceReference(device) else { throw ValidationError("--device takes USER_DID#DEVICE_ID") }
            let plan = try database.open(.readOnly).rejoinPlan(user: pair.user, device: pair.device)
            try StandardStreams.writeOutput(plan.operations.flatMap { $0.reported(pretty: false) + [0x0a] })
            switch plan.emptyBecause {
            case nil: break
            case .alreadyEverywhere:
                diagnostics.note("nothing to rejoin: \(device) is already in every conversation of \(pair.user)")
            case .closedByRevocation(let batches, let conversations):
                diagnostics.note("nothing to rejoin: every membership of \(pair.user) was closed by revocation (batch\(batches.count == 1 ? "" : "es") \(batches.joined(separator: ", ")))")
                diagnostics.note("a revocation is never undone: an admin of each conversation must add this device again from the app: \(conversations.joined(separator: ", "))")
            case .noKeyPackages(let conversations):
                diagnostics.note("nothing to rejoin yet: \(device) cannot be added until it publishes key packages (its key_packages_available counts none); then run this again for its \(counted(conversations.count, "conversation")): \(conversations.joined(separator: ", "))")
            case .userInNoConversation:
                diagnostics.note("nothing to rejoin: \(pair.user) is in no conversation, and no revocation closed one")
            }
        }
    }
}
