import ArgumentParser
import CLISupport
import FoundationEssentials
import VaultCore
import VaultRegistry

extension Registry {
    struct Members: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "members",
            abstract: "The user-level view of a conversation: one row per user, device count, admin flag.",
            discussion: """
            Examples:
              device-revoker registry members --db registry.sqlite --convo family-chat
              device-revoker registry members --db registry.sqlite --convo family-chat \\
                --json
            """
        )
        @OptionGroup var database: Database
        @Option(help: ArgumentHelp("The conversation id.", valueName: "ID")) var convo: String
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let members = try database.open(.readOnly).members(conversation: convo)
            if json {
                try StandardStreams.writeOutput(JSONValue.array(members.map {
                    .object([("userDid", .string($0.userDid)), ("deviceCount", .int($0.deviceCount)), ("deviceIds", .array($0.deviceIds.map(JSONValue.string))),
                             ("isAdmin", .bool($0.isAdmin)), ("joinedAt", .string($0.joinedAt))])
                }).reported())
                return
            }
            var table = TextTable()
            table.add("user", "devices", "admin", "joined")
            for member in members { table.add(member.userDid, "\(member.deviceCount)", member.isAdmin ? "admin" : "", member.joinedAt) }
            try StandardStreams.writeOutput(Array(table.render().utf8))
        }
    }
}
