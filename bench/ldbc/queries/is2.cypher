// IS2. Recent messages of a person: the person's last 10 messages, each with the original post of its
// conversation (the message itself for a post) and that post's author.
MATCH (:Person {id: $personId})<-[:HAS_CREATOR]-(message:Message)
WITH message
ORDER BY message.creationDate DESC, message.id DESC
LIMIT 10
MATCH (message)-[:REPLY_OF*0..]->(post:Post)-[:HAS_CREATOR]->(author:Person)
RETURN
  message.id AS messageId,
  coalesce(message.content, message.imageFile) AS messageContent,
  message.creationDate AS messageCreationDate,
  post.id AS originalPostId,
  author.id AS originalPostAuthorId,
  author.firstName AS originalPostAuthorFirstName,
  author.lastName AS originalPostAuthorLastName
ORDER BY messageCreationDate DESC, messageId DESC
