// IS6. Forum of a message: the forum containing the message, or for a comment the forum containing the original
// post of its thread (followed through the REPLY_OF chain), and the forum's moderator.
MATCH (:Message {id: $messageId})-[:REPLY_OF*0..]->(:Post)<-[:CONTAINER_OF]-(forum:Forum)
MATCH (forum)-[:HAS_MODERATOR]->(moderator:Person)
RETURN
  forum.id AS forumId,
  forum.title AS forumTitle,
  moderator.id AS moderatorId,
  moderator.firstName AS moderatorFirstName,
  moderator.lastName AS moderatorLastName
