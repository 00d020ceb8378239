// IC9. Recent messages by friends or friends of friends: the 20 most recent messages created before $maxDate by
// people one or two KNOWS steps from the person, the person excluded.
MATCH (root:Person {id: $personId})-[:KNOWS*1..2]-(friend:Person)
WHERE friend <> root
WITH DISTINCT friend
MATCH (friend)<-[:HAS_CREATOR]-(message:Message)
WHERE message.creationDate < $maxDate
RETURN
  friend.id AS personId,
  friend.firstName AS personFirstName,
  friend.lastName AS personLastName,
  message.id AS messageId,
  coalesce(message.content, message.imageFile) AS messageContent,
  message.creationDate AS messageCreationDate
ORDER BY messageCreationDate DESC, messageId ASC
LIMIT 20
